"""The API key stays out of everything a turn stores, sends or writes (real turn, real SQLite)."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from smith_tui.engine import events as ev
from tests.support.llm_server import ScriptedLLMServer, http_error, text_reply, tool_call
from tests.support.runtime import make_git_repo, open_runtime

KEY = "sk-smith-e2e-0f1e2d3c4b5a69788796a5b4"


def _database_texts(db: Path) -> list[str]:
    """Every value of every row of every table, as text."""
    conn = sqlite3.connect(db)
    try:
        tables = [
            row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
        ]
        texts = []
        for table in tables:
            for row in conn.execute(f'SELECT * FROM "{table}"'):
                texts.extend(
                    v.decode("utf-8", "replace") if isinstance(v, bytes) else str(v) for v in row
                )
        return texts
    finally:
        conn.close()


async def test_a_turn_that_prints_the_key_stores_sends_and_exports_none_of_it(
    tmp_path: Path, llm_server: ScriptedLLMServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("LLM_API_KEY", KEY)
    llm_server.api_key = KEY  # the server answers 401 unless the key really was sent
    repo = make_git_repo(tmp_path / "repo")
    (repo / "creds.txt").write_text(f"token={KEY}\n")
    llm_server.enqueue(
        text_reply(
            tool_calls=[
                tool_call("bash", {"command": 'echo "key=[$LLM_API_KEY]"; printenv'}),
                tool_call("bash", {"command": "cat creds.txt; cat creds.txt >&2"}),
            ]
        ),
        text_reply(
            tool_calls=[
                tool_call("read", {"path": "creds.txt"}),
                tool_call("code_grep", {"pattern": "token="}),
            ]
        ),
        text_reply("Done looking."),
    )
    runtime, rec = open_runtime(tmp_path, llm_server.base_url, cwd=repo)
    result = await runtime.run_turn("show me what the key is")
    assert result.stop_reason == "completed", result

    # The key was used where it belongs: in the Authorization header of every request.
    chats = [r for r in llm_server.requests if r.method == "POST"]
    assert len(chats) == 3
    assert all(r.headers["authorization"] == f"Bearer {KEY}" for r in chats)
    # ... and nowhere in what was sent to the model.
    for request in llm_server.requests:
        assert KEY.encode() not in request.body

    finished = rec.of(ev.ToolCallFinished)
    assert [e.name for e in finished] == ["bash", "bash", "read", "code_grep"]
    assert all(e.ok for e in finished)
    env_call, cat_call, read_call, grep_call = finished
    # bash never saw the variable at all (empty, not redacted).
    assert "key=[]" in env_call.content
    assert "LLM_API_KEY=" not in env_call.content
    assert "PATH=" in env_call.content  # printenv did run
    # A file holding the key: redacted wherever a tool shows it.
    assert cat_call.content.count("token=***") == 2
    assert "token=***" in read_call.content
    assert "token=***" in grep_call.content
    for event in rec.events:
        assert KEY not in json.dumps(event.to_dict(), default=str)
    live = "".join(e.text for e in rec.of(ev.ToolOutputDelta))
    assert "token=***" in live and KEY not in live

    md, js = tmp_path / "out.md", tmp_path / "out.json"
    assert (await runtime.submit(f"/export {md}")).ok
    assert (await runtime.submit(f"/export {js}")).ok
    for exported in (md, js):
        text = exported.read_text()
        assert "token=***" in text and KEY not in text

    await runtime.aclose()
    db = tmp_path / "smith.db"
    for path in (db, db.with_name("smith.db-wal")):
        if path.exists():
            assert KEY.encode() not in path.read_bytes(), path
    texts = _database_texts(db)
    assert any("token=***" in text for text in texts)
    assert not [text for text in texts if KEY in text]


async def test_a_key_typed_into_the_prompt_is_redacted_from_the_export(
    tmp_path: Path, llm_server: ScriptedLLMServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SMITH_TEST_CUSTOM_KEY", KEY)
    llm_server.enqueue(text_reply("noted"))
    runtime, _ = open_runtime(
        tmp_path,
        llm_server.base_url,
        config={"llm_config": {"api_key_env": "SMITH_TEST_CUSTOM_KEY"}},
    )
    await runtime.run_turn(f"my key is {KEY}")
    target = tmp_path / "out.md"
    assert (await runtime.submit(f"/export {target}")).ok
    text = target.read_text()
    assert "my key is ***" in text and KEY not in text
    await runtime.aclose()


async def test_a_server_error_echoing_the_key_is_redacted_before_it_is_stored_or_shown(
    tmp_path: Path, llm_server: ScriptedLLMServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The llm module redacts its own errors (smith_tui/llm/secret.py); this checks the whole
    # way to the database and the events, with a key variable the config names.
    monkeypatch.setenv("SMITH_TEST_CUSTOM_KEY", KEY)
    llm_server.enqueue(
        http_error(401, {"error": {"message": f"Incorrect API key provided: {KEY}"}})
    )
    runtime, rec = open_runtime(
        tmp_path,
        llm_server.base_url,
        config={"llm_config": {"api_key_env": "SMITH_TEST_CUSTOM_KEY"}},
    )
    result = await runtime.run_turn("hello")
    assert result.stop_reason == "error"
    assert result.error is not None and "Incorrect API key provided: ***" in result.error.message
    for event in rec.events:
        assert KEY not in json.dumps(event.to_dict(), default=str)
    await runtime.aclose()
    db = tmp_path / "smith.db"
    for path in (db, db.with_name("smith.db-wal")):
        if path.exists():
            assert KEY.encode() not in path.read_bytes(), path
    assert not [text for text in _database_texts(db) if KEY in text]
